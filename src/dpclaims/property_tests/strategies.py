"""Hypothesis strategies: Gaussian natural parameters, records, neighbouring datasets.

They compose: :func:`dpsep_step_examples` builds a DP-SEP state from
:func:`gaussian_natural_params` and a replace-one pair from
:func:`replace_one_pairs`. Values are bounded so that nothing overflows and
failing examples shrink to small, readable numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dpclaims.algorithms.sep import DPSEPParams, cavity_moments, dpsep_theta_new
from dpclaims.analysis.gaussian import clip_to_norm, flatten_natural, natural_dim

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


@dataclass(frozen=True)
class DPSEPStepExample:
    """One DP-SEP step on a replace-one pair, with the state it starts from.

    ``n_records`` is N in Alg. 3 (the size of the full training set the step's
    weights use); the pair holds the records the hypothesis search varied.
    """

    params: DPSEPParams
    n_records: int
    theta_f: np.ndarray
    theta_0: np.ndarray
    pair: tuple

    def theta_new(self, likelihood, which: int) -> np.ndarray:
        """Noiseless theta_new (p,) when the step processes D[index] (0) or D'[index] (1)."""
        x, y, x2, y2, index = self.pair
        xs, ys = (x, y) if which == 0 else (x2, y2)
        theta_cav = self.theta_0 + (self.n_records - 1) * self.theta_f
        mean, cov, _ = cavity_moments(theta_cav[None], None)
        site = likelihood.site(mean, cov, xs[index][None], np.array([ys[index]]))
        site = clip_to_norm(site, self.params.clipping_norm)[0]
        return dpsep_theta_new(self.theta_f, site, self.theta_0, self.n_records, self.params)

    def distance(self, likelihood) -> float:
        """||theta_new(D) - theta_new(D')||_2 (the quantity Prop. 1 bounds)."""
        return float(np.linalg.norm(self.theta_new(likelihood, 0) - self.theta_new(likelihood, 1)))

    def magnitude(self, likelihood) -> float:
        """||theta_new(D)|| + ||theta_new(D')||: the scale of the rounding error."""
        return float(np.linalg.norm(self.theta_new(likelihood, 0))
                     + np.linalg.norm(self.theta_new(likelihood, 1)))


@st.composite
def dpsep_step_examples(draw, task: str, reading: str, max_dim: int = 3,
                        max_records: int = 100_000):
    """Random DP-SEP states and replace-one pairs for Prop. 1's property test.

    Draws d in [1, max_dim], N in [2, max_records], C in [0.1, 10], gamma in
    (0, min(N, 10)], a site theta_f with PSD precision and ||theta_f|| <= C, a prior
    theta_0 with positive definite precision and ||theta_0|| <= C (Alg. 3's
    "Require"), and a replace-one pair of records with ||x|| <= 10.
    """
    d = draw(st.integers(1, max_dim))
    n_records = draw(st.integers(2, max_records))
    clipping_norm = draw(st.floats(0.1, 10.0, **_finite))
    damping = draw(st.floats(0.01, float(min(n_records, 10)), **_finite))
    params = DPSEPParams(clipping_norm=clipping_norm, damping=damping, reading=reading)
    theta_f = draw(gaussian_natural_params(d, clipping_norm, psd=True))
    prior_var = draw(st.floats(0.5, 100.0, **_finite))
    theta_0 = flatten_natural(np.zeros(d), np.eye(d) / prior_var)
    theta_0 = clip_to_norm(theta_0, clipping_norm)
    pair = draw(replace_one_pairs(records(d, task), 1, 5))
    assert theta_f.shape == (natural_dim(d),)
    return DPSEPStepExample(params, n_records, theta_f, theta_0, pair)


# --------------------------------------------------------------------------- record domains


def domain_records(domain):
    """Strategy of single records from a record domain (:mod:`dpclaims.analysis.domains`).

    Box: each coordinate ``low + u (high - low)`` with u in [0, 1] (hypothesis tries
    the ends first, so corners come early). Ball: a point of the cube
    [-1, 1]^shape, projected onto the unit ball when outside, times the radius
    (points outside land on the sphere). FiniteSet: one of its records.
    """
    from dpclaims.analysis.domains import Ball, Box, check_domain

    check_domain(domain)
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

    if relation not in ("replace-one", "add-remove"):
        raise ValueError(f"relation must be 'replace-one' or 'add-remove', got {relation!r}")
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
