"""Hypothesis strategies: Gaussian natural parameters, records, neighbouring datasets.

They compose: a family's strategies (e.g.
:func:`dpclaims.algorithms.sep.strategies.dpsep_step_examples`) build its states from
:func:`gaussian_natural_params` and its neighbouring pairs from
:func:`replace_one_pairs`. Values are bounded so that nothing overflows and
failing examples shrink to small, readable numbers.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dpclaims.analysis.gaussian import flatten_natural

_finite = dict(allow_nan=False, allow_infinity=False)


@st.composite
def gaussian_natural_params(draw, d: int, max_norm: float, psd: bool = True):
    """Flat natural parameters (p,) with L2 norm <= ``max_norm``.

    With ``psd`` the precision is L L^T (positive semi-definite), as the sites of
    log-concave likelihoods are; otherwise any symmetric matrix.
    """
    h = draw(arrays(float, d, elements=st.floats(-10, 10, **_finite)))
    m = draw(arrays(float, (d, d), elements=st.floats(-3, 3, **_finite)))
    precision = np.tril(m) @ np.tril(m).T if psd else 0.5 * (m + m.T)
    theta = flatten_natural(h, precision)
    norm = np.linalg.norm(theta)
    fraction = draw(st.floats(0.0, 1.0, **_finite))
    if norm == 0:
        return theta
    return theta * (fraction * max_norm / norm)


@st.composite
def records(draw, d: int, task: str, max_feature_norm: float = 10.0):
    """One record (x (d,), y): y in {-1, +1} for "classification", a float otherwise."""
    x = draw(arrays(float, d, elements=st.floats(-max_feature_norm, max_feature_norm, **_finite)))
    norm = np.linalg.norm(x)
    if norm > max_feature_norm:
        x = x * (max_feature_norm / norm)
    if task == "classification":
        y = draw(st.sampled_from([-1.0, 1.0]))
    else:
        y = draw(st.floats(-10, 10, **_finite))
    return x, y


@st.composite
def replace_one_pairs(draw, record_strategy, min_size: int = 1, max_size: int = 8):
    """Neighbouring datasets under replace-one: (x (n, d), y (n,), x', y', index).

    D' equals D except at ``index``, where the record is replaced by a fresh draw.
    """
    rows = draw(st.lists(record_strategy, min_size=min_size, max_size=max_size))
    index = draw(st.integers(0, len(rows) - 1))
    replacement = draw(record_strategy)
    x = np.array([r[0] for r in rows])
    y = np.array([r[1] for r in rows])
    x2, y2 = x.copy(), y.copy()
    x2[index], y2[index] = replacement
    return x, y, x2, y2, index


# --------------------------------------------------------------------------- record domains


def domain_records(domain):
    """Strategy of single records from a record domain (:mod:`dpclaims.analysis.domains`).

    Box: each coordinate ``low + u (high - low)`` with u in [0, 1] (hypothesis tries
    the ends first, so corners come early). Ball: a point of the cube
    [-1, 1]^shape, projected onto the unit ball when outside, times the radius
    (points outside land on the sphere). FiniteSet: one of its records. Product: one
    record of each factor, each drawn with the factor's own strategy and shrunk on
    its own, joined into the flat record (:meth:`~dpclaims.analysis.domains.Product.join`).

    Parameters
    ----------
    domain : Box, Ball, FiniteSet or Product

    Returns
    -------
    hypothesis strategy
        Of records of ``domain.shape``.

    Raises
    ------
    TypeError
        ``domain`` is not a record domain.
    """
    from dpclaims.analysis.domains import Ball, Box, Product, check_domain

    check_domain(domain)
    if isinstance(domain, Product):
        return st.tuples(*(domain_records(f) for f in domain.factors)).map(domain.join)
    if isinstance(domain, Box):
        unit = arrays(float, domain.shape, elements=st.floats(0.0, 1.0, **_finite))
        return unit.map(lambda u: domain.low + u * (domain.high - domain.low))
    if isinstance(domain, Ball):
        cube = arrays(float, domain.shape, elements=st.floats(-1.0, 1.0, **_finite))

        def to_ball(v):
            norm = np.linalg.norm(v.ravel(), ord=domain.norm)
            return domain.radius * (v / norm if norm > 1 else v)

        return cube.map(to_ball)
    return st.sampled_from(domain.records)


def neighbouring_datasets(records, relation: str, *, base=None, min_size: int = 1,
                          max_size: int = 8):
    """Strategy of neighbouring datasets ``(d0, d1)`` under ``relation``.

    Parameters
    ----------
    records : hypothesis strategy
        Single records (e.g. :func:`domain_records`), arrays of one shape.
    relation : {"replace-one", "add-remove"}
    base : dataset, optional
        A fixed dataset (N, ...) to build the pairs around: replace-one sets record
        i of ``base`` to r0 in d0 and r1 in d1; add-remove sets record i to r0 in
        d0 and adds r1 to it in d1 (or removes record j). Without ``base``, d0 is
        ``min_size`` to ``max_size`` records drawn from ``records``.
    """
    from dpclaims.analysis.records import add_record, n_records, remove_record, replace_record
    from dpclaims.analysis.vocabulary import check_relation

    check_relation(relation)
    if base is None:
        d0s = st.lists(records, min_size=min_size, max_size=max_size).map(np.stack)
        if relation == "replace-one":
            return st.tuples(d0s, st.integers(0, max_size - 1), records).map(
                lambda t: (t[0], replace_record(t[0], t[1] % len(t[0]), t[2])))
        add = st.tuples(d0s, records).map(lambda t: (t[0], add_record(t[0], t[1])))
        remove = st.tuples(d0s.filter(lambda d: len(d) > 1), st.integers(0, max_size - 1)).map(
            lambda t: (t[0], remove_record(t[0], t[1] % len(t[0]))))
        return st.one_of(add, remove)
    n = n_records(base)
    if relation == "replace-one":
        return st.tuples(st.integers(0, n - 1), records, records).map(
            lambda t: (replace_record(base, t[0], t[1]), replace_record(base, t[0], t[2])))
    d0s = st.tuples(st.integers(0, n - 1), records).map(
        lambda t: replace_record(base, t[0], t[1]))
    add = st.tuples(d0s, records).map(lambda t: (t[0], add_record(t[0], t[1])))
    if n < 2:
        return add
    remove = st.tuples(d0s, st.integers(0, n - 1)).map(
        lambda t: (t[0], remove_record(t[0], t[1])))
    return st.one_of(add, remove)


def draw_examples(strategy, n: int, seed: int) -> list:
    """Up to ``n`` examples of ``strategy``, reproducibly: the same seed, the same list.

    Runs hypothesis's own generation (boundary values and small examples first,
    as in a property test) with ``seed`` and collects what it draws; fewer than n
    when the strategy has fewer distinct examples. Used by the neighbouring-pair
    search to draw candidate pairs from a record domain.
    """
    from random import Random

    from hypothesis import HealthCheck, find, settings
    from hypothesis.errors import NoSuchExample

    from dpclaims.property_tests.sensitivity import _no_local_constants

    seen: list = []

    def collect(example) -> bool:
        seen.append(example)
        return False

    conf = settings(max_examples=n, database=None, deadline=None,
                    suppress_health_check=list(HealthCheck))
    try:
        with _no_local_constants():
            find(strategy, collect, settings=conf, random=Random(seed))
    except NoSuchExample:
        pass
    return seen[:n]
